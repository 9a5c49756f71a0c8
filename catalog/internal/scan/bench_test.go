package scan

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// fbcBlob is the shape of every FBC blob (package, channel, bundle), property values kept raw.
type fbcBlob struct {
	Schema         string `json:"schema"`
	Name           string `json:"name"`
	Package        string `json:"package"`
	Image          string `json:"image"`
	DefaultChannel string `json:"defaultChannel"`
	Properties     []struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	} `json:"properties"`
	RelatedImages []struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	} `json:"relatedImages"`
	Entries []struct {
		Name      string   `json:"name"`
		Replaces  string   `json:"replaces"`
		Skips     []string `json:"skips"`
		SkipRange string   `json:"skipRange"`
	} `json:"entries"`
}

// BenchmarkDecodeComposed decodes every blob of the composed-279 catalog's JSON files (82 MB) with
// DecodeInto: the decoder on its own, without the loader around it.
func BenchmarkDecodeComposed(b *testing.B) {
	root := shareddata.Dir(b, "catalogs", "composed-279")
	var files [][]byte
	total := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		files, total = append(files, data), total+len(data)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(total))
	blobs := 0
	for b.Loop() {
		blobs = 0
		for _, data := range files {
			for i := SkipSpace(data, 0); i < len(data); blobs++ {
				var blob fbcBlob
				end, err := DecodeInto(data, i, &blob)
				if err != nil {
					b.Fatal(err)
				}
				i = SkipSpace(data, end)
			}
		}
	}
	b.ReportMetric(float64(blobs), "blobs/op")
}
