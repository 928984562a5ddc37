package probes

import "github.com/leakbench/leakbench/internal/lib/rundir"

// sentTokens finds the run's bearer tokens in query texts. Drivers that
// bind parameters on the client (psycopg2, JDBC's simple protocol,
// string-built SQL) send a token lookup as `… WHERE token = 'tok-…'`:
// the quoted literal names the users that sent it, where nothing else
// (no trace context) does. Only single-quoted literals are looked up, in
// a map: the cost is the query's length, whatever the number of tokens.
type sentTokens struct {
	index map[string]int
	n     int
}

func newSentTokens(tokens []string) *sentTokens {
	if len(tokens) == 0 {
		return nil
	}
	s := &sentTokens{index: make(map[string]int, len(tokens)), n: len(tokens)}
	for i, t := range tokens {
		if _, dup := s.index[t]; !dup && t != "" {
			s.index[t] = i
		}
	}
	return s
}

// find returns the first token of the run that q carries as a
// single-quoted literal (” is a quote inside one), nil when none.
func (s *sentTokens) find(q string) *rundir.SentBy {
	if s == nil {
		return nil
	}
	for i := 0; i < len(q); i++ {
		if q[i] != '\'' {
			continue
		}
		start, plain := i+1, true
		j := start
		for ; j < len(q); j++ {
			if q[j] != '\'' {
				continue
			}
			if j+1 < len(q) && q[j+1] == '\'' {
				plain = false // an escaped quote: no token has one
				j++
				continue
			}
			break
		}
		if j >= len(q) {
			return nil // cut at track_activity_query_size
		}
		if plain {
			if tok, ok := s.index[q[start:j]]; ok {
				return &rundir.SentBy{Token: tok, Tokens: s.n}
			}
		}
		i = j
	}
	return nil
}
