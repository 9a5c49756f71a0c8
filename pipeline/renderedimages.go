package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/render/template"
)

// renderedImages adds to u the image uses of the bundles the drift gate's renders (the render stage's,
// s.rendered) add to the base's catalogs: what the change's templates add, whether or not its render is
// committed. A use the committed catalogs already gave keeps their file and line; a new one is placed on
// the template line naming the image (the template's first line when none does, as for related images).
func (s *state) renderedImages(ctx context.Context, u *imageUses, baseOf map[string]*catalog.Catalog, pkgs map[string]bool) error {
	lines := map[string][]string{} // template -> its lines
	for _, r := range s.rendered {
		if r.Err != nil || len(r.Data) == 0 {
			continue
		}
		head, err := loadSubset(ctx, fstest.MapFS{template.RenderedFile: {Data: r.Data}}, "")
		if err != nil {
			return fmt.Errorf("reading the render of %s for catalog %s: %w", r.Job.Template, r.Job.Catalog.Name, err)
		}
		tmpl := r.Job.Template
		if _, ok := lines[tmpl]; !ok {
			data, err := os.ReadFile(filepath.Join(s.headDir, filepath.FromSlash(tmpl)))
			if err != nil {
				return fmt.Errorf("reading %s: %w", tmpl, err)
			}
			lines[tmpl] = strings.Split(string(data), "\n")
		}
		cat, ok := s.layout.catalogNamed(r.Job.Catalog.Name)
		if !ok {
			continue
		}
		u.add(cat, baseOf[cat.Name], head, pkgs, func(ref *images.Ref) {
			ref.File, ref.Line = tmpl, 1
			for i, l := range lines[tmpl] {
				if strings.Contains(l, ref.Image) {
					ref.Line = i + 1
					break
				}
			}
		})
	}
	return nil
}
