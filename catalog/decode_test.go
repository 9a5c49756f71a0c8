package catalog

import "testing"

// ManifestHeader reads only the top level (and metadata.name): a kind nested in the spec, or a key that
// differs in case, is not the manifest's; of duplicates the last wins; what is not an object is an error.
func TestManifestHeader(t *testing.T) {
	for _, c := range []struct{ in, api, kind, name string }{
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"kind":"x"},"name":"cm"},"data":{"a":"b"}}`, "v1", "ConfigMap", "cm"},
		{`{"spec":{"kind":"NetworkPolicy","apiVersion":"x"},"kind":"Service","Kind":"NetworkPolicy"}`, "", "Service", ""},
		{` {"kind":"ConfigMap","kind":"NetworkPolicy","metadata":{"name":"a","name":"b"}}`, "", "NetworkPolicy", "b"},
		{`{"kind":5,"apiVersion":"v1"}`, "v1", "", ""},
	} {
		api, kind, name, err := ManifestHeader([]byte(c.in))
		if err != nil || api != c.api || kind != c.kind || name != c.name {
			t.Errorf("%s: got %q %q %q %v, want %q %q %q", c.in, api, kind, name, err, c.api, c.kind, c.name)
		}
	}
	for _, in := range []string{`[]`, ``, `{"kind":"ConfigMap"`, `{"kind":"ConfigMap",}`} {
		if _, _, _, err := ManifestHeader([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
