// Package redact removes secrets — passwords in PostgreSQL DSNs and bearer
// tokens — from anything leakbench prints or writes.
//
//	redact.DSN("postgres://app:s3cret@db:5432/mcp") // postgres://app:xxxxx@db:5432/mcp
//	redact.String("Authorization: Bearer abc123")   // Authorization: Bearer xxxxx
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces every secret.
const Mask = "xxxxx"

// DSN returns dsn with its password masked. It understands URL DSNs
// (postgres://user:pw@host/db?password=pw) and keyword/value DSNs
// (host=h password=pw). Anything it cannot parse is masked whole, since it
// might be a secret.
func DSN(dsn string) string {
	if dsn == "" {
		return ""
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return Mask
		}
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), Mask)
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", Mask)
			u.RawQuery = q.Encode()
		}
		return strings.Replace(u.String(), url.QueryEscape(Mask), Mask, -1)
	}
	return kvPassword.ReplaceAllString(dsn, "${1}"+Mask)
}

var (
	kvPassword  = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)
	urlPassword = regexp.MustCompile(`(postgres(?:ql)?://[^:/@\s]*:)[^@\s]*@`)
	bearer      = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+`)
	lbToken     = regexp.MustCompile(`lbt_[0-9a-f]{8,}`)
)

// String masks every DSN password and bearer token found inside free text,
// such as an error message.
func String(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}"+Mask+"@")
	s = kvPassword.ReplaceAllString(s, "${1}"+Mask)
	s = bearer.ReplaceAllString(s, "${1}"+Mask)
	s = lbToken.ReplaceAllString(s, "lbt_"+Mask)
	return s
}
