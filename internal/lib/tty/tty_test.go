package tty

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// TestNotATerminal: a buffer, a nil file and a regular file are not
// terminals (a test has no terminal to assert the other way on).
func TestNotATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	var nilFile *os.File
	for _, c := range []struct {
		name string
		w    io.Writer
	}{{"buffer", &bytes.Buffer{}}, {"nil file", nilFile}, {"regular file", f}, {"/dev/null (a character device)", devNull}} {
		if Is(c.w) {
			t.Errorf("%s taken for a terminal", c.name)
		}
	}
}
