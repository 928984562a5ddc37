package scenariofile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/leakbench/leakbench/scenarios/plan"
)

// readBounded reads a file of at most limit bytes.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	n, err := b.ReadFrom(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b.Bytes(), nil
}

// ReadTokens reads bearer tokens, one a line; blank lines and lines
// starting with # are skipped. It is the one reader of a tokens file: a
// scenario's tokensFile and the --tokens-file flag. Errors never quote a
// token.
func ReadTokens(path string) ([]string, error) {
	data, err := readBounded(path, maxTokensBytes)
	if err != nil {
		return nil, fmt.Errorf("read the tokens file: %w", err)
	}
	var toks []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if plan.BadToken(t) {
			return nil, fmt.Errorf("%s:%d: token contains whitespace or control characters", path, line)
		}
		toks = append(toks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the tokens file: %w", err)
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("tokens file %s holds no token", path)
	}
	return toks, nil
}
