package validate

import (
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/catalog"
)

// TestBundleObjectNotBase64: the bundle's bad property is the one error; the channel entry naming the
// rejected bundle is not also reported as an entry without a bundle (issue 14).
func TestBundleObjectNotBase64(t *testing.T) {
	fsys := fstest.MapFS{"foo/catalog.json": {Data: []byte(`{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"}]}
{"schema":"olm.bundle","name":"foo.v0.1.0","package":"foo","image":"quay.io/x/foo@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.1.0"}},{"type":"olm.bundle.object","value":{"data":"not base64!"}}]}
`)}}
	res, err := load(func(lo catalog.LoadOptions) (*catalog.Result, error) { return catalog.LoadFS(t.Context(), fsys, lo) }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Rule != "property-bundle-object-invalid" || res.Diagnostics[0].Line != 3 {
		t.Errorf("diagnostics %v, want the one property-bundle-object-invalid on line 3", res.Diagnostics)
	}
}
