package plan

import (
	"go.yaml.in/yaml/v3"
)

// How virtual users reach the target (Plan.SharedConnections):
//
//	connections: perUser          # the default: one keep-alive connection per user
//	connections: {shared: 64}     # all users share a pool of at most 64 idle connections
//
// A connection per user is what real MCP clients (and k6's VUs) have:
// 3,000 users are 3,000 connections to the server, its accept queue, its
// per-connection memory and its keep-alive timers. A shared pool sends
// the same requests over far fewer connections; use it to measure a peak
// request rate, not to reproduce real clients.
const (
	ConnectionsPerUser = "perUser"
	connectionsShared  = "shared"
	// MaxSharedConnections bounds connections: {shared: N}.
	MaxSharedConnections = MaxUsers
)

// connections decodes the plan's connections: option.
func (d *ydec) connections(n *yaml.Node, p *Plan) {
	const path = "connections"
	r := d.resolve(n)
	if r != nil && r.Kind == yaml.ScalarNode {
		if v := d.str(r, path); v != "" && norm(v) != norm(ConnectionsPerUser) {
			d.errf(r, path, "want %s or {shared: N}, got %s", ConnectionsPerUser, describe(r))
		}
		p.SharedConnections = 0
		return
	}
	entries, ok := d.mapping(n, path, []string{connectionsShared})
	if !ok {
		return
	}
	for _, e := range entries {
		v := d.smallInt(e.v, path+"."+connectionsShared)
		if v < 1 || v > MaxSharedConnections {
			d.errf(e.v, path+"."+connectionsShared, "want a number of connections in [1, %d], got %d", MaxSharedConnections, v)
			continue
		}
		p.SharedConnections = v
	}
}

// connectionsJSON is the connections: option as MarshalJSON writes it.
func (p Plan) connectionsJSON() any {
	if p.SharedConnections > 0 {
		return obj{{connectionsShared, p.SharedConnections}}
	}
	return ConnectionsPerUser
}
