package mcp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// maxCAFile bounds a CA bundle read by [TLSConfig].
const maxCAFile = 4 << 20

// TLSConfig returns the TLS settings for https targets: the system roots,
// plus the PEM certificates in caFile if given (a staging CA), or no
// verification at all when insecure (a self-signed staging server: the
// traffic is then open to anyone in the path). nil, nil means the
// defaults.
func TLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	if caFile == "" && !insecure {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // asked for by name
	if caFile != "" {
		fi, err := os.Stat(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		if fi.Size() > maxCAFile {
			return nil, fmt.Errorf("CA file %s: larger than %d bytes", caFile, maxCAFile)
		}
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("CA file " + caFile + " holds no PEM certificate")
		}
		c.RootCAs = pool
	}
	return c, nil
}
