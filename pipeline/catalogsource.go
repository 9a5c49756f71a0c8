package pipeline

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/catalogbot/catalogbot/config"
)

// CatalogSources is, for each image template a cluster follows (config.Catalog.FollowImage), the
// CatalogSource that follows it: its olm.catalogImageTemplate annotation is the template, which OLM
// fills in from the cluster's Kubernetes version as the cluster upgrades, and its image is the newest
// catalog's (the last in version order) under that template. "" when no catalog has such a template.
func CatalogSources(cats []config.Catalog) string {
	newest := map[string]config.Catalog{}
	var order []string
	for _, c := range cats {
		if c.FollowImage == "" {
			continue
		}
		if _, ok := newest[c.FollowImage]; !ok {
			order = append(order, c.FollowImage)
		}
		newest[c.FollowImage] = c
	}
	var b strings.Builder
	for _, tmpl := range order {
		c := newest[tmpl]
		image, err := config.ExpandImage(tmpl, c.Name, c.Kubernetes)
		if err != nil {
			continue // resolved once already (config.Catalog.images): not reached
		}
		name := catalogSourceName(tmpl)
		if b.Len() > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: %s
  annotations:
    olm.catalogImageTemplate: %s
spec:
  sourceType: grpc
  image: %s
  displayName: %s
  updateStrategy:
    registryPoll:
      interval: 30m
`, name, strconv.Quote(tmpl), image, name)
	}
	return b.String()
}

// catalogSourceName is a CatalogSource name from an image template: its repository's last path
// element, lower case, other characters than letters, digits and '-' as '-'.
func catalogSourceName(tmpl string) string {
	repo := tmpl
	if slash := strings.LastIndex(repo, "/"); slash >= 0 {
		repo = repo[slash+1:]
	}
	repo, _, _ = strings.Cut(repo, ":")
	var b strings.Builder
	for _, r := range strings.ToLower(repo) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if name := strings.Trim(b.String(), "-"); name != "" && len(name) <= 63 {
		return name
	}
	return "catalog"
}
