package policy

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/catalog"
)

// ImageObjects reads a bundle image's manifests, as olm.bundle.object data (the pipeline's reads go
// through the render cache, bounded by its limits and the stage's deadline). An error of the image's
// content must be diag.InvalidError; any other (a registry outage) is the stage's infrastructure error.
type ImageObjects func(ctx context.Context, image string) ([][]byte, error)

// imageRules need a bundle's objects, which a catalog in olm.csv.metadata form does not hold: with
// Input.ImageObjects set they are read from the bundle image.
var imageRules = append([]string{ruleCSVRequiredFields, ruleNetworkPolicy, ruleSize, ruleRemovedAPI, ruleV1Conditions, ruleV1Webhooks}, ofRules...)

// maxImagesAtOnce bounds the bundle images read at the same time.
const maxImagesAtOnce = 4

// fetchObjects reads, for each checked bundle whose catalog entry holds no olm.bundle.object, its
// objects from its image, and decodes its content from them (the catalog's other properties kept): the
// content, OLM v1 and operator-framework rules then judge the bundle as if the catalog held them. A
// bundle that cannot be read fails the run with an error naming the bundle and its image, never a pass.
func (r *run) fetchObjects() error {
	if r.in.ImageObjects == nil || !r.on(imageRules...) {
		return nil
	}
	type job struct {
		b       *catalog.Bundle
		objects [][]byte
	}
	var jobs []*job
	for _, p := range r.ix.order {
		for _, bi := range p.bundles {
			if bi.b.Image != "" && !hasProperty(bi.b, catalog.PropertyBundleObject) {
				jobs = append(jobs, &job{b: bi.b})
			}
		}
	}
	g, ctx := errgroup.WithContext(r.ctx)
	g.SetLimit(maxImagesAtOnce)
	for _, j := range jobs {
		g.Go(func() error {
			objs, err := r.in.ImageObjects(ctx, j.b.Image)
			if err != nil {
				return fmt.Errorf("bundle %q: reading its objects from image %s: %w", j.b.Name, j.b.Image, err)
			}
			j.objects = objs
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, j := range jobs {
		// the bundle as if the catalog held its image's objects: one olm.bundle.object each, read decoded
		withObjects := *j.b
		withObjects.Properties = slices.Clip(slices.Clone(j.b.Properties))
		for range j.objects {
			withObjects.Properties = append(withObjects.Properties, catalog.Property{Type: catalog.PropertyBundleObject})
		}
		r.contents[j.b] = decodeContent(&withObjects, r.what, j.objects, true)
		r.res.FromImages++
	}
	return nil
}
