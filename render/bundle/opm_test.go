package bundle

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
)

// diffRow is one line of the differential test's table.
type diffRow struct {
	name, mode, opm, ours, verdict string
}

// TestMatchesOPM renders every real bundle of the shared data and every synthesized edge case with the
// reference opm and with Render, in three modes (bundle directory; as an image; as an image migrated to
// olm.csv.metadata), and requires the same blob (as JSON values; byte equality is reported) or the same
// refusal, except for the cases where Render is stricter on purpose.
func TestMatchesOPM(t *testing.T) {
	opm := opmTool(t)
	type input struct {
		name, dir string
		want      verdict
	}
	var inputs []input
	real := realBundles(t)
	for _, name := range slices.Sorted(maps.Keys(real)) {
		inputs = append(inputs, input{name: name, dir: real[name], want: same})
	}
	for _, c := range edgeCases {
		inputs = append(inputs, input{name: "edge/" + c.name, dir: writeBundle(t, c.files), want: c.want})
	}

	var (
		mu   sync.Mutex
		rows []diffRow
	)
	t.Run("cases", func(t *testing.T) {
		for _, in := range inputs {
			for _, m := range modes {
				t.Run(in.name+"/"+m.name, func(t *testing.T) {
					t.Parallel()
					theirs, opmOK := runOPM(t, opm, in.dir, m)
					ours, err := renderMode(t, in.dir, m)
					row := diffRow{name: in.name, mode: m.name, opm: "rendered", ours: "rendered"}
					if !opmOK {
						row.opm = "failed"
					}
					if err != nil {
						row.ours = "failed"
					}
					switch {
					case opmOK && err == nil:
						switch {
						case bytes.Equal(ours, theirs):
							row.verdict = "identical bytes"
						case sameJSON(t, ours, theirs):
							row.verdict = "same JSON"
						default:
							row.verdict = "DIFFERENT"
							t.Errorf("the blobs differ:\n%s", diffProperties(ours, theirs))
						}
						if in.want == stricter {
							t.Errorf("want Render to refuse this bundle, it rendered it")
						}
					case !opmOK && err != nil:
						row.verdict = "both refuse"
						t.Logf("opm: %s\nours: %v", lastLine(theirs), err)
					case opmOK:
						row.verdict = "we refuse"
						if in.want != stricter {
							row.verdict = "WE REFUSE"
							t.Errorf("opm renders it, Render fails: %v", err)
						}
					default:
						row.verdict = "OPM REFUSES"
						t.Errorf("opm refuses it (%s), Render renders it", lastLine(theirs))
					}
					mu.Lock()
					rows = append(rows, row)
					mu.Unlock()
				})
			}
		}
	})

	slices.SortFunc(rows, func(a, b diffRow) int { return strings.Compare(a.name+" "+a.mode, b.name+" "+b.mode) })
	var table strings.Builder
	fmt.Fprintf(&table, "%-62s %-14s %-9s %-9s %s\n", "bundle", "mode", "opm", "ours", "verdict")
	counts := map[string]int{}
	for _, r := range rows {
		fmt.Fprintf(&table, "%-62s %-14s %-9s %-9s %s\n", r.name, r.mode, r.opm, r.ours, r.verdict)
		counts[r.verdict]++
	}
	t.Logf("differential test against %s:\n%s%v", opm, table.String(), counts)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
