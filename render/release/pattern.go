package release

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Named is one bundle image a template names, with its package and the bundle's version ("" when
// unknown: no committed catalog holds the bundle).
type Named struct {
	Package, Version, Image string
}

// Detected is the release.bundleImage pattern the images a repository's templates name show.
type Detected struct {
	// Pattern is the pattern written ("" when the images show none clearly; Why says why).
	Pattern string
	Why     string
	// Best is the pattern that explains the most images, even when it is not clear enough to write.
	Best string
	// Explained of Counted tagged images with a known version are Best's; Others are examples of
	// the rest (at most MaxOthers), sorted.
	Explained, Counted int
	Others             []string
	// Packages is how many packages have counted images; Unexplained names those with none explained.
	Packages    int
	Unexplained []string
	// Digests are images pinned by digest and Unknown images whose version is unknown: neither counts.
	Digests, Unknown int
}

// MaxOthers bounds Detected.Others.
const MaxOthers = 3

// clearShare is the share of the counted images a pattern must explain to be written (4 of 5).
const clearShare = 0.8

// DetectPattern finds the pattern (registry/prefix/{package}:{version}) that explains the most images,
// Image(pattern, package, version) being the image; ties go to the one of more packages, then of fewer
// placeholders, then the first in byte order (which puts a placeholder late). It is clear, and set in Pattern, when it explains at
// least four of five counted images and at least one of every package that has counted images. An
// image pinned by digest shows no version, and one whose version is unknown cannot be checked: neither
// counts for or against.
func DetectPattern(images []Named) Detected {
	var d Detected
	seen := map[Named]bool{}
	var counted []Named
	votes := map[string]map[string]int{} // pattern -> package -> images explained
	pkgs := map[string]bool{}
	for _, n := range images {
		if seen[n] {
			continue
		}
		seen[n] = true
		switch {
		case strings.Contains(n.Image, "@"):
			d.Digests++
			continue
		case n.Version == "":
			d.Unknown++
			continue
		}
		counted = append(counted, n)
		pkgs[n.Package] = true
		for _, p := range Candidates(n.Image, n.Package, n.Version) {
			if votes[p] == nil {
				votes[p] = map[string]int{}
			}
			votes[p][n.Package]++
		}
	}
	d.Counted, d.Packages = len(counted), len(pkgs)
	if d.Counted == 0 {
		d.Why = "no template names a bundle image by tag with a version a committed catalog shows"
		return d
	}
	type score struct {
		pattern          string
		images, packages int
		placeholders     int
	}
	var scores []score
	for p, by := range votes {
		s := score{pattern: p, packages: len(by), placeholders: strings.Count(p, "{package}") + strings.Count(p, "{version}")}
		for _, n := range by {
			s.images += n
		}
		scores = append(scores, s)
	}
	slices.SortFunc(scores, func(a, b score) int {
		return cmp.Or(b.images-a.images, b.packages-a.packages, a.placeholders-b.placeholders, strings.Compare(a.pattern, b.pattern))
	})
	if len(scores) == 0 {
		d.Why = fmt.Sprintf("none of the %d images names its package and its bundle's version (outside the registry host)", d.Counted)
		d.Others = examples(counted)
		return d
	}
	d.Best = scores[0].pattern
	explainedPkgs := map[string]bool{}
	var others []Named
	for _, n := range counted {
		if img, err := Image(d.Best, n.Package, n.Version); err == nil && img == n.Image {
			d.Explained++
			explainedPkgs[n.Package] = true
		} else {
			others = append(others, n)
		}
	}
	d.Others = examples(others)
	for p := range pkgs {
		if !explainedPkgs[p] {
			d.Unexplained = append(d.Unexplained, p)
		}
	}
	slices.Sort(d.Unexplained)
	switch {
	case float64(d.Explained) < clearShare*float64(d.Counted):
		d.Why = fmt.Sprintf("the best pattern, %s, explains only %d of %d images (it needs four of five)", d.Best, d.Explained, d.Counted)
	case len(d.Unexplained) > 0:
		d.Why = fmt.Sprintf("the best pattern, %s, explains no image of %s", d.Best, strings.Join(d.Unexplained, ", "))
	default:
		d.Pattern = d.Best
	}
	return d
}

// examples are up to MaxOthers of ns, as "image (package version)", sorted.
func examples(ns []Named) []string {
	var out []string
	for _, n := range ns {
		out = append(out, fmt.Sprintf("%s (%s %s)", n.Image, n.Package, n.Version))
	}
	slices.Sort(out)
	return out[:min(len(out), MaxOthers)]
}

// maxOccurrences bounds the occurrences of the package or version a reference's candidates consider.
const maxOccurrences = 8

// Candidates are the patterns that name image for package pkg at version: the package replaced by
// {package} and the version by {version}, each at one of its occurrences or at all of them, never in the
// registry host (a package named like the registry stays the registry). Each candidate reproduces
// image through Image. An image by digest has none: it shows no version.
func Candidates(image, pkg, version string) []string {
	if pkg == "" || version == "" || strings.Contains(image, "@") || strings.ContainsAny(image, "{}") {
		return nil
	}
	host := hostLen(image)
	pkgAt := occurrences(image, pkg, host)
	verAt := occurrences(image, version, host)
	var out []string
	for _, ps := range choices(pkgAt) {
		for _, vs := range choices(verAt) {
			p, ok := replaceAt(image, pkg, ps, version, vs)
			if !ok {
				continue
			}
			if got, err := Image(p, pkg, version); err == nil && got == image && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// hostLen is the length of image's registry host with its slash (0 when the reference names none:
// Docker Hub), by the reference rule: a first component with a dot or a port, or localhost.
func hostLen(image string) int {
	first, _, found := strings.Cut(image, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return len(first) + 1
	}
	return 0
}

// occurrences are the offsets of s in image from offset from on, not overlapping.
func occurrences(image, s string, from int) []int {
	var at []int
	for i := from; i <= len(image) && len(at) < maxOccurrences; {
		j := strings.Index(image[i:], s)
		if j < 0 {
			break
		}
		at = append(at, i+j)
		i += j + len(s)
	}
	return at
}

// choices are each single occurrence, and all of them when there are several.
func choices(at []int) [][]int {
	var out [][]int
	for _, a := range at {
		out = append(out, []int{a})
	}
	if len(at) > 1 {
		out = append(out, at)
	}
	return out
}

// replaceAt replaces pkg at offsets ps and version at offsets vs; not ok when two overlap.
func replaceAt(image, pkg string, ps []int, version string, vs []int) (string, bool) {
	type span struct {
		at, end int
		with    string
	}
	var spans []span
	for _, p := range ps {
		spans = append(spans, span{p, p + len(pkg), "{package}"})
	}
	for _, v := range vs {
		spans = append(spans, span{v, v + len(version), "{version}"})
	}
	slices.SortFunc(spans, func(a, b span) int { return a.at - b.at })
	var b strings.Builder
	last := 0
	for _, s := range spans {
		if s.at < last {
			return "", false
		}
		b.WriteString(image[last:s.at])
		b.WriteString(s.with)
		last = s.end
	}
	b.WriteString(image[last:])
	return b.String(), true
}
