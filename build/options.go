package build

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/registry"
)

// DefaultBase is the base image when Options.Base is empty: the upstream opm image of the opm version
// catalogbot mirrors.
const DefaultBase = "quay.io/operator-framework/opm:v1.73.0"

// Options configure Image and Push. The zero value builds on DefaultBase for all its platforms.
type Options struct {
	// Base is the base image reference; empty means DefaultBase.
	Base string
	// Platforms selects platforms of a multi-arch base; empty means all of them. Every requested platform
	// must be present in the base (fields left empty in a requested platform match anything).
	Platforms []v1.Platform
	// Epoch is the timestamp of every file in the layer and of the image config. The zero value means
	// $SOURCE_DATE_EPOCH when set, else the Unix epoch.
	Epoch time.Time
	// Cmd replaces the image command; nil means Cmd (see config.go for why it differs from opm's).
	Cmd []string
	// Labels are added to the config of every catalog image, and to the index as annotations when the
	// result is an OCI index (e.g. RevisionLabel: the commit the catalog comes from).
	Labels map[string]string
	// BeforeTag, when set, runs in Push after the image is pushed by digest and before the tag is moved;
	// an error leaves the tag where it is and is Push's error.
	BeforeTag func(ctx context.Context) error
	// Transport carries registry requests; nil means registry.Transport (plain HTTP only to loopback).
	Transport http.RoundTripper
	// Keychain resolves registry credentials; nil means authn.DefaultKeychain.
	Keychain authn.Keychain
	// Retry is the back-off for requests failing with registry.RetryStatusCodes; the zero value means
	// registry.DefaultBackoff.
	Retry remote.Backoff
	// NameOptions are used to parse Base (name.Insecure for a plain-HTTP registry off loopback).
	NameOptions []name.Option
	// RemoteOptions are applied last and override everything above.
	RemoteOptions []remote.Option
}

// remoteOptions assembles the options of every registry call: context, credentials, transport, retries.
func (o Options) remoteOptions(ctx context.Context) []remote.Option {
	opts := append(registry.Options(o.Keychain, o.Retry), remote.WithContext(ctx))
	if o.Transport != nil {
		opts = append(opts, remote.WithTransport(o.Transport))
	}
	return append(opts, o.RemoteOptions...)
}

// epoch resolves Options.Epoch, $SOURCE_DATE_EPOCH and the Unix epoch, in that order, to whole seconds.
func (o Options) epoch() (time.Time, error) {
	if !o.Epoch.IsZero() {
		if o.Epoch.Unix() < 0 {
			return time.Time{}, diag.UsageError(fmt.Errorf("build epoch %s is before 1970", o.Epoch))
		}
		return o.Epoch.Truncate(time.Second).UTC(), nil
	}
	return EpochFromEnv()
}

// EpochFromEnv returns $SOURCE_DATE_EPOCH (seconds since 1970) when set, else the Unix epoch.
func EpochFromEnv() (time.Time, error) {
	s, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	secs, err := strconv.ParseInt(s, 10, 64)
	if err != nil || secs < 0 {
		return time.Time{}, diag.UsageError(fmt.Errorf("SOURCE_DATE_EPOCH %q is not a non-negative number of seconds", s))
	}
	return time.Unix(secs, 0).UTC(), nil
}
