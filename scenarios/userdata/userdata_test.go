package userdata

import (
	"bytes"
	"testing"
)

// FuzzReadData: the data readers never panic, and what they accept has
// every row as wide as the header.
func FuzzReadData(f *testing.F) {
	for _, s := range []string{"a,b\n1,2\n", "a\n\"x\ny\"\n", "a,b\n1\n", `[{"a":1,"b":"x"},{"a":2,"b":"y"}]`, `[{"a":{}}]`, "[]", "", "\ufeffa\n1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, read := range []func() (*Table, error){
			func() (*Table, error) { return ReadCSV(bytes.NewReader(b), "f.csv") },
			func() (*Table, error) { return ReadJSON(bytes.NewReader(b), "f.json") },
		} {
			tbl, err := read()
			if err != nil {
				continue
			}
			if tbl.Rows() == 0 || len(tbl.off) != tbl.Rows()*len(tbl.Columns)+1 {
				t.Fatalf("%d rows, %d columns, %d offsets", tbl.Rows(), len(tbl.Columns), len(tbl.off))
			}
			for r := range tbl.Rows() {
				for c := range tbl.Columns {
					_ = tbl.Cell(r, c)
				}
			}
		}
	})
}
