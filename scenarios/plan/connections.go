package plan

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
	ConnectionsShared  = "shared"
	// MaxSharedConnections bounds connections: {shared: N}.
	MaxSharedConnections = MaxUsers
)

// connectionsJSON is the connections: option as MarshalJSON writes it.
func (p Plan) connectionsJSON() any {
	if p.SharedConnections > 0 {
		return obj{{ConnectionsShared, p.SharedConnections}}
	}
	return ConnectionsPerUser
}
