package servers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/leakbench/leakbench/fixtures"
	"github.com/leakbench/leakbench/fixtures/images"
)

// BuildImages builds the docker provider's images where they are missing
// and writes to w where each came from: a table and the time it took, or
// with asJSON the images as one JSON array.
func BuildImages(ctx context.Context, opts images.Options, w io.Writer, asJSON bool) error {
	start := time.Now()
	imgs, err := fixtures.BuildImages(ctx, opts)
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	if asJSON {
		return json.NewEncoder(w).Encode(imgs)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "ROLE\tIMAGE\tSTATUS\tSOURCE\n")
	for _, im := range imgs {
		status := "reused"
		if im.Built {
			status = fmt.Sprintf("built in %.1fs", im.BuildSeconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", im.Role, im.Tag, status, im.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "done in %.1fs\n", time.Since(start).Seconds())
	return nil
}
