package graph

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/internal/golden"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

var update = flag.Bool("update", false, "rewrite golden files")

// realChannels are the channels of a real catalog, each with a diff that marks its head and adds its
// first and last entries.
func realChannels(t testing.TB, name string) ([]*catalog.Channel, []ChannelDiff) {
	t.Helper()
	res, err := catalog.LoadDir(context.Background(), shareddata.Dir(t, "catalogs", name), catalog.LoadOptions{Lean: true})
	if err != nil {
		t.Fatal(err)
	}
	var diffs []ChannelDiff
	for _, c := range res.Catalog.Channels {
		d := ChannelDiff{Package: c.Package, Channel: c.Name}
		if len(c.Entries) > 0 {
			d.NewHead = catalog.NewGraph(c).Head()
			d.AddedEntries = []string{c.Entries[0].Name}
			if last := c.Entries[len(c.Entries)-1].Name; last != d.AddedEntries[0] {
				d.AddedEntries = append(d.AddedEntries, last)
			}
			slices.Sort(d.AddedEntries)
		}
		diffs = append(diffs, d)
	}
	return res.Catalog.Channels, diffs
}

// The mermaid block of every channel of a real catalog, as a digest per channel: the block is what pull
// request comments, check runs and step summaries show, and the golden files hold it as written before
// the graph became a structure (report.UpgradeGraph; commit d3a650f).
func TestMermaidOfRealChannels(t *testing.T) {
	for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20", "composed-279"} {
		t.Run(name, func(t *testing.T) {
			chans, diffs := realChannels(t, name)
			var b strings.Builder
			for i, c := range chans {
				fmt.Fprintf(&b, "%s/%s %x\n", c.Package, c.Name, sha256.Sum256([]byte(UpgradeGraph(c, diffs[i]).Mermaid())))
			}
			golden.Compare(t, "testdata/mermaid-"+name+".txt", b.String(), *update)
		})
	}
}
