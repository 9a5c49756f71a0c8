package graph

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

func load(t *testing.T, blobs string) *catalog.Catalog {
	t.Helper()
	res, err := catalog.LoadFS(context.Background(), fstest.MapFS{"foo/catalog.json": {Data: []byte(blobs)}}, catalog.LoadOptions{})
	if err != nil || diag.HasErrors(res.Diagnostics) {
		t.Fatalf("load: %v %v", err, res.Diagnostics)
	}
	return res.Catalog
}

const pkg = `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
`

func bundle(name, version, image, extra string) string {
	return `{"schema":"olm.bundle","name":"` + name + `","package":"foo","image":"` + image + `","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"` + version + `"}}` + extra + `]}
`
}

var base = pkg +
	`{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"},{"name":"foo.v0.2.0","replaces":"foo.v0.1.0"}]}
{"schema":"olm.channel","name":"beta","package":"foo","entries":[{"name":"foo.v0.1.0"}]}
` + bundle("foo.v0.1.0", "0.1.0", "example.com/foo@sha256:01", "") + bundle("foo.v0.2.0", "0.2.0", "example.com/foo@sha256:02", "")

func TestDiffGraphsChannels(t *testing.T) {
	head := pkg +
		`{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"},{"name":"foo.v0.2.0","replaces":"foo.v0.1.0"},{"name":"foo.v0.3.0","replaces":"foo.v0.2.0","skips":["foo.v0.1.0"]}]}
{"schema":"olm.channel","name":"fast","package":"foo","entries":[{"name":"foo.v0.3.0"}]}
` + bundle("foo.v0.1.0", "0.1.0", "example.com/foo@sha256:01", "") + bundle("foo.v0.2.0", "0.2.0", "example.com/foo@sha256:02", "") +
		bundle("foo.v0.3.0", "0.3.0", "example.com/foo@sha256:03", "")
	diffs, ds := DiffGraphs(load(t, base), load(t, head), map[string]bool{"foo": true}, false)
	if len(ds) != 0 {
		t.Fatalf("adding a bundle is no released-bundle problem: %v", ds)
	}
	want := []ChannelDiff{
		{Package: "foo", Channel: "beta", Removed: true, OldHead: "foo.v0.1.0", RemovedEntries: []string{"foo.v0.1.0"}},
		{Package: "foo", Channel: "fast", New: true, NewHead: "foo.v0.3.0", AddedEntries: []string{"foo.v0.3.0"}},
		{Package: "foo", Channel: "stable", OldHead: "foo.v0.2.0", NewHead: "foo.v0.3.0", AddedEntries: []string{"foo.v0.3.0"},
			AddedEdges: []string{"foo.v0.3.0 replaces foo.v0.2.0", "foo.v0.3.0 skips foo.v0.1.0"}},
	}
	if !reflect.DeepEqual(diffs, want) {
		t.Fatalf("diffs:\n got %+v\nwant %+v", diffs, want)
	}
	md, graphs := GraphDetails(load(t, head), diffs)
	if len(graphs) != 2 || graphs[0].Channel != "fast" || graphs[1].Channel != "stable" || !strings.Contains(md, graphs[1].Mermaid()) {
		t.Errorf("graphs %+v of\n%s", graphs, md)
	}
	for _, s := range []string{"#### foo / beta (removed)", "#### foo / fast (new channel)", "- head: `foo.v0.2.0` → `foo.v0.3.0`",
		"n2 -.->|skips| n0", `style n2 fill:`} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	// Other packages are not compared.
	if diffs, _ := DiffGraphs(load(t, base), load(t, head), map[string]bool{"bar": true}, false); len(diffs) != 0 {
		t.Fatalf("diffs of an untouched package: %+v", diffs)
	}
}

// Published bundles are immutable: a pull request may not remove one, or change its image, related
// images or properties under the same name (clusters that installed it would silently differ from the
// catalog). Reformatting a property's JSON is no change.
func TestReleasedBundleGuard(t *testing.T) {
	stable := `{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"},{"name":"foo.v0.2.0","replaces":"foo.v0.1.0"}]}
`
	cases := []struct {
		name, head, rule, what string
	}{
		{"image swapped", pkg + stable + bundle("foo.v0.1.0", "0.1.0", "example.com/foo@sha256:01", "") +
			bundle("foo.v0.2.0", "0.2.0", "evil.example/foo@sha256:66", ""), "released-bundle-modified", "image example.com/foo@sha256:02 -> evil.example/foo@sha256:66"},
		{"property added", pkg + stable + bundle("foo.v0.1.0", "0.1.0", "example.com/foo@sha256:01", "") +
			bundle("foo.v0.2.0", "0.2.0", "example.com/foo@sha256:02", `,{"type":"olm.maxOpenShiftVersion","value":"4.99"}`), "released-bundle-modified", "properties"},
		{"removed", pkg + `{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"}]}
` + bundle("foo.v0.1.0", "0.1.0", "example.com/foo@sha256:01", ""), "released-bundle-removed", `"foo.v0.2.0"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ds := DiffGraphs(load(t, base), load(t, c.head), map[string]bool{"foo": true}, false)
			if len(ds) != 1 || ds[0].Rule != c.rule || ds[0].Severity != diag.Error || ds[0].Bundle != "foo.v0.2.0" ||
				ds[0].File != "foo/catalog.json" || !strings.Contains(ds[0].Message, c.what) {
				t.Fatalf("want one %s error on foo.v0.2.0 saying %q, got %+v", c.rule, c.what, ds)
			}
			// graph.allowModifyReleased turns the error into a warning; it never hides it.
			_, ds = DiffGraphs(load(t, base), load(t, c.head), map[string]bool{"foo": true}, true)
			if len(ds) != 1 || ds[0].Severity != diag.Warning {
				t.Fatalf("want a warning with allowModify, got %+v", ds)
			}
		})
	}
	reformatted := strings.Replace(base, `{"packageName":"foo","version":"0.2.0"}`, `{ "packageName": "foo",  "version": "0.2.0" }`, 1)
	if _, ds := DiffGraphs(load(t, base), load(t, reformatted), map[string]bool{"foo": true}, false); len(ds) != 0 {
		t.Fatalf("reformatted JSON flagged: %v", ds)
	}
}

// Names come from the pull request: one carrying quotes or Mermaid syntax cannot break out of its
// node label into the rendered diagram.
func TestMermaidQuotesNames(t *testing.T) {
	ch := &catalog.Channel{Package: "foo", Name: "stable", Entries: []catalog.ChannelEntry{{Name: `a"]; click n0 "https://evil.example`}}}
	out := UpgradeGraph(ch, ChannelDiff{}).Mermaid()
	if strings.Contains(out, `"https://evil.example"`) || strings.Count(out, `"`) != 2 {
		t.Fatalf("a name broke out of its label:\n%s", out)
	}
}
