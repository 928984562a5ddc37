package mcptest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteUsersCSV writes dir/users.csv, a scenario's data file: one column,
// email, and rows u0@x.org … u<rows-1>@x.org. A flow that echoes
// '{{data.email}}' sends them to a server whose [Server.CallTexts] then
// shows which rows the users took.
func WriteUsersCSV(t testing.TB, dir string, rows int) string {
	t.Helper()
	var csv strings.Builder
	csv.WriteString("email\n")
	for i := range rows {
		fmt.Fprintf(&csv, "u%d@x.org\n", i)
	}
	path := filepath.Join(dir, "users.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatalf("writing the users data file: %v", err)
	}
	return path
}
