// Package redact is leakbench's one redaction policy: it removes secrets —
// passwords in DSNs and URLs of any scheme, secret query parameters, bearer
// and basic credentials, leakbench's own tokens, and secrets the caller
// knows by value — from anything leakbench prints or writes, always
// replacing them with the same [Mask].
//
//	redact.DSN("postgres://app:s3cret@db:5432/mcp")     // postgres://app:xxxxx@db:5432/mcp
//	redact.URL("https://ci:tok@mirror/debian?token=t")  // https://ci:xxxxx@mirror/debian?token=xxxxx
//	redact.String("Authorization: Bearer abc123")       // Authorization: Bearer xxxxx
//	redact.Literal("echo: lbt_1234…", "lbt_12345678")   // echo: xxxxx…
//
// Every function is idempotent: redacting redacted text changes nothing.
//
// What counts as a secret:
//   - the password of a URL's userinfo, whatever the scheme (postgres,
//     http, https, …), also when it contains a raw '@';
//   - the whole userinfo of an http(s) URL that has no password, since
//     "https://TOKEN@host" is how tokens ride in URLs (a PostgreSQL URL's
//     lone user name is kept: it is a role name, not a secret);
//   - the values of query parameters named like secrets (password, token,
//     access_token, api_key, secret, client_secret, signature, …);
//   - password=… in keyword/value DSNs and PGPASSWORD=… assignments;
//   - "Bearer …" and "Basic …" credentials, and lbt_… tokens.
package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces every secret, everywhere.
const Mask = "xxxxx"

// secretParams are query parameter names whose values are secrets
// (compared in lower case).
var secretParams = map[string]bool{
	"password": true, "passwd": true, "pwd": true, "pass": true,
	"token": true, "access_token": true, "refresh_token": true, "id_token": true,
	"api_key": true, "apikey": true, "key": true, "secret": true, "client_secret": true,
	"auth": true, "sig": true, "signature": true, "sslpassword": true,
}

var (
	// urlUserinfo finds scheme://user:password@ in free text. The password
	// runs to the last '@' before the host part ends, so a raw '@' inside a
	// password is masked whole; it stops at '/', '?', '#' and whitespace,
	// so "https://host:8080/a@b" (no userinfo) is left alone.
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]*):([^\s/?#]*)@`)
	// httpToken finds http(s)://TOKEN@host: a userinfo without a password.
	httpToken = regexp.MustCompile(`((?i:https?)://)([^\s/?#@:]+)@`)
	// queryParam finds name=value after '?', '&' or ';' in free text.
	queryParam = regexp.MustCompile(`([?&;]([A-Za-z_]+)=)([^&\s#"']*)`)
	kvPassword = regexp.MustCompile(`(?i)((?:^|[^A-Za-z0-9_])[A-Za-z_]*password\s*=\s*)('(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s'"]+)`)
	// jsonSecret finds "password": "…" and its kin in JSON text.
	jsonSecret = regexp.MustCompile(`(?i)("(?:password|passwd|token|access_token|refresh_token|api_key|apikey|secret|client_secret)"\s*:\s*")((?:[^"\\]|\\.)*)"`)
	authScheme = regexp.MustCompile(`(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=\-]+`)
	lbToken    = regexp.MustCompile(`lbt_[0-9a-f]{8,}`)
)

// DSN returns dsn with its password masked. It understands URL DSNs
// (postgres://user:pw@host/db?password=pw) and keyword/value DSNs
// (host=h password=pw). A URL it cannot parse is masked whole, since it
// might be a secret.
func DSN(dsn string) string {
	if strings.Contains(dsn, "://") {
		return URL(dsn)
	}
	return kvPassword.ReplaceAllString(dsn, "${1}"+Mask)
}

// URL returns raw with every secret in it masked: the userinfo's password
// (any scheme), the whole userinfo of an http(s) URL without a password,
// and secret query parameters. Text that is not a URL is redacted as free
// text ([String]); a URL that does not parse is masked whole.
func URL(raw string) string {
	if !strings.Contains(raw, "://") {
		return String(raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Mask
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), Mask)
		} else if isHTTP(u.Scheme) && u.User.Username() != "" {
			u.User = url.User(Mask)
		}
	}
	if u.RawQuery != "" {
		u.RawQuery = queryParam.ReplaceAllStringFunc("?"+u.RawQuery, maskParam)[1:]
	}
	return u.String()
}

func isHTTP(scheme string) bool {
	return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")
}

// String masks every secret found inside free text, such as an error
// message or a log line.
func String(s string) string {
	s = urlUserinfo.ReplaceAllString(s, "${1}:"+Mask+"@")
	s = httpToken.ReplaceAllString(s, "${1}"+Mask+"@")
	s = queryParam.ReplaceAllStringFunc(s, maskParam)
	s = kvPassword.ReplaceAllString(s, "${1}"+Mask)
	s = jsonSecret.ReplaceAllString(s, "${1}"+Mask+`"`)
	s = authScheme.ReplaceAllString(s, "${1}"+Mask)
	s = lbToken.ReplaceAllString(s, Mask)
	return s
}

// maskParam masks one name=value match of queryParam if the name is a
// secret's.
func maskParam(m string) string {
	eq := strings.IndexByte(m, '=')
	if !secretParams[strings.ToLower(m[1:eq])] {
		return m
	}
	return m[:eq+1] + Mask
}

// minCutSecret is the shortest start of a secret that [Literal] masks
// before a cut ("…"): fewer characters say little and are likelier to be
// other text.
const minCutSecret = 4

// Literal masks every occurrence of a secret known by value (a bearer
// token the caller sent, say) in text that may echo it — also its start
// when the text was cut right after it, as a truncated snippet ending in
// "…" is. Other secrets in text are masked as by [String].
func Literal(text, secret string) string {
	if secret != "" {
		text = strings.ReplaceAll(text, secret, Mask)
		if strings.Contains(text, "…") {
			text = maskCutPrefix(text, secret)
		}
	}
	return String(text)
}

// maskCutPrefix masks, before every "…" in text, the longest start of
// secret (at least minCutSecret bytes) that the text ends with there.
func maskCutPrefix(text, secret string) string {
	var b strings.Builder
	for {
		head, rest, cut := strings.Cut(text, "…")
		for k := min(len(secret)-1, len(head)); k >= minCutSecret; k-- {
			if strings.HasSuffix(head, secret[:k]) {
				head = head[:len(head)-k] + Mask
				break
			}
		}
		b.WriteString(head)
		if !cut {
			return b.String()
		}
		b.WriteString("…")
		text = rest
	}
}
