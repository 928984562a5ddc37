package runner

import (
	"crypto/tls"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/gateway-under-test"
	"github.com/leakbench/leakbench/scenarios/mcp"
	"github.com/leakbench/leakbench/scenarios/plan"
)

// What the CLI fills Options, SignoffOptions and TargetOptions with comes
// from the libraries below the application layer. It is re-exported here,
// as aliases and one-line functions, so that cmd/leakbench imports the
// application layer only; a wrapper type around each would be ceremony.

// External are the user's own endpoints (Options.External): fixtures'
// type.
type External = fixtures.External

// Segment is the slice of a plan one shard plays (Options.Shard): plan's
// type; ParseSegment reads "I/N".
type Segment = plan.Segment

// ParseSegment reads a shard's "I/N" (leakbench run --shard).
func ParseSegment(s string) (Segment, error) { return plan.ParseSegment(s) }

// OAuthConfig is the OAuth 2.1 client-credentials grant of
// TargetOptions.OAuth: the MCP client's type.
type OAuthConfig = mcp.OAuthConfig

// TLSConfig is the TLS configuration of an https target
// (TargetOptions.TLS): the system roots plus the PEM certificates in
// caFile, or no verification at all when insecure.
func TLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	return mcp.TLSConfig(caFile, insecure)
}

// VariantNames lists the reference gateway's variants, comma-separated,
// for help texts.
func VariantNames() string { return gateway.VariantNames() }

// CheckVariants reports whether s names reference gateway variants (one,
// or several leak variants comma-separated), with an error naming the
// known ones when it does not.
func CheckVariants(s string) error {
	_, err := gateway.ParseVariants(s)
	return err
}
