package chromium

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"slices"
)

// ShrinkPNG rewrites a screenshot for the docs at 8 bits a pixel: the
// page's 256 most frequent colours, each pixel its nearest, at best
// compression. A page of charts is mostly flat colours, so the loss is
// the anti-aliasing's; the file is a third of Chromium's or less, which
// is what a screenshot committed to the repository should weigh.
func ShrinkPNG(file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("shrink screenshot: %w", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("shrink screenshot %s: %w", file, err)
	}
	b := img.Bounds()
	counts := map[color.RGBA]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	cols := make([]color.RGBA, 0, len(counts))
	for c := range counts {
		cols = append(cols, c)
	}
	// The most frequent first; ties by value, so that the same page
	// gives the same file.
	slices.SortFunc(cols, func(a, b color.RGBA) int {
		if d := counts[b] - counts[a]; d != 0 {
			return d
		}
		return int(a.R)<<24 | int(a.G)<<16 | int(a.B)<<8 | int(a.A) - (int(b.R)<<24 | int(b.G)<<16 | int(b.B)<<8 | int(b.A))
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range cols[:min(len(cols), 256)] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(b, pal)
	draw.Draw(out, b, img, b.Min, draw.Src) // nearest colour, no dithering: flat areas stay flat
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out); err != nil {
		return fmt.Errorf("shrink screenshot %s: %w", file, err)
	}
	if buf.Len() >= len(raw) {
		return nil // already smaller as it was
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}
