package main

import (
	"context"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build/bundleimage"
)

// bundlePusher is the App's bot.BundlePusher: build/bundleimage's reproducible bundle image, pushed by
// digest then tag (never replacing a released tag) with the job's registry transport and credentials.
type bundlePusher struct{}

func (bundlePusher) Push(ctx context.Context, dir, ref string, ropts []remote.Option) (string, error) {
	return bundleimage.Push(ctx, dir, ref, bundleimage.WithRemoteOptions(ropts...))
}
