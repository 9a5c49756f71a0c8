package statuspage

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/graph"
	goldenpkg "github.com/catalogbot/catalogbot/internal/golden"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/report"
)

// The drawing of every channel of real catalogs, with its head marked and its newest entry added, as a
// digest per channel: the golden files hold the drawings the run page showed when it still read the graph
// back from its mermaid text (commit d3a650f), so drawing from the structure draws the same.
func TestUpgradeGraphSVGOfRealChannels(t *testing.T) {
	for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20", "composed-279"} {
		t.Run(name, func(t *testing.T) {
			res, err := catalog.LoadDir(context.Background(), shareddata.Dir(t, "catalogs", name), catalog.LoadOptions{Lean: true})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, c := range res.Catalog.Channels {
				d := graph.ChannelDiff{Package: c.Package, Channel: c.Name}
				if len(c.Entries) > 0 {
					d.NewHead = catalog.NewGraph(c).Head()
					d.AddedEntries = []string{c.Entries[len(c.Entries)-1].Name}
				}
				g := graph.UpgradeGraph(c, d)
				parts := detailParts(report.Stage{Details: g.Mermaid(), Graphs: []report.UpgradeGraph{g}})
				if len(parts) != 1 || parts[0].SVG == "" {
					t.Fatalf("%s/%s not drawn: %+v", c.Package, c.Name, parts)
				}
				fmt.Fprintf(&b, "%s/%s %x\n", c.Package, c.Name, sha256.Sum256([]byte(parts[0].SVG)))
			}
			goldenpkg.Compare(t, "testdata/golden/graphsvg-"+name+".txt", b.String(), *update)
		})
	}
}
