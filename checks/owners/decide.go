package owners

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
)

// Change is what a pull request touches, classified by the caller.
type Change struct {
	// Packages are the touched packages (catalog content), by name.
	Packages map[string]PackageChange
	// Paths are other touched paths, relative to the repository root: the configuration, owners files,
	// anything outside a package.
	Paths []string
	// NewPackages are packages absent from the base revision.
	NewPackages []string
	// ConfigChanged says .catalogbot.yaml changed (also inferred from Paths).
	ConfigChanged bool
	// ReferenceEntries are touched entries of the references file, named by their package.
	ReferenceEntries []string
	// OwnersKept are owners files (repository paths) whose list of owners this change leaves as it was at
	// its base (a ci.yaml whose catalog mapping changed, say): they are package content, which an owner
	// may change. Any other change to an owners file needs a maintainer.
	OwnersKept map[string]bool
}

// PackageChange is one touched package.
type PackageChange struct {
	// Files are the package's touched files (repository paths). An owners file among them (ci.yaml,
	// OWNERS, or the configured ownersFrom file) needs a maintainer; the others need an owner.
	Files []string
}

// Membership answers whether login belongs to org/team. The bot implements it with the GitHub API; org,
// team and login arrive lowercased (GitHub compares them case-insensitively).
type Membership interface {
	IsMember(ctx context.Context, org, team, login string) (bool, error)
}

// Decision is the verdict on a change.
type Decision struct {
	Allowed     bool
	Denied      []Denial
	Diagnostics []diag.Diagnostic
}

// Denial is one thing the author may not change, and who could approve it instead.
type Denial struct {
	// Subject is a package name or a repository path.
	Subject string
	Reason  string
	// CouldApprove lists the logins and org/team slugs whose approving review would permit it (when
	// approvals.ownerReviewSatisfies is set), as spelled in the configuration.
	CouldApprove []string
}

type subjectKind int

const (
	kindPackage subjectKind = iota
	kindNewPackage
	kindConfig
	kindOwnersFile
	kindOutside
)

// subject is one thing to permit.
type subject struct {
	name string // package name or path
	kind subjectKind
	pkg  string // the package it belongs to, if any
	file string // a file to point the diagnostic at, if any
}

// Decide says whether author may make the change ch under cfg. ownersFiles maps a package to the extra
// owners its owners file lists at the base revision (see ParseOwnersFile). approvers are the logins with
// an approving review. members resolves org/team entries; nil means teams have no members. Maintainers
// may change anything; a touched package or reference entry needs one of its owners; new packages, the
// configuration, owners files and paths outside any package need a maintainer. When
// approvals.ownerReviewSatisfies is set, an approver who would be allowed permits a subject the author
// may not change. The error is for failed membership lookups (or missing input), not for denials.
func Decide(ctx context.Context, cfg *config.Config, ownersFiles map[string][]string, ch Change, author string, approvers []string, members Membership) (Decision, error) {
	if cfg == nil {
		return Decision{}, errors.New("owners: no configuration (use Default() when the repository has none)")
	}
	if !config.ValidLogin(author) {
		return Decision{}, diag.UsageError(fmt.Errorf("owners: author %q is not a GitHub login", author))
	}
	r := &resolver{members: members, cache: map[string]bool{}}
	var dec Decision
	maintainers := r.parse(cfg.Maintainers)
	extra := map[string][]config.Principal{}
	for _, pkg := range slices.Sorted(maps.Keys(ownersFiles)) {
		for _, s := range ownersFiles[pkg] {
			p, why, ok := config.ParsePrincipal(s)
			if !ok {
				dec.Diagnostics = append(dec.Diagnostics, diag.Diagnostic{Severity: diag.Warning, Check: "owners", Rule: "owners-file-bad-entry",
					Package: pkg, Message: fmt.Sprintf("owners file entry %q of package %s ignored: %s", s, pkg, why)})
				continue
			}
			extra[pkg] = append(extra[pkg], p)
		}
	}
	for _, s := range subjects(cfg, ch) {
		allowed := maintainers
		if s.kind == kindPackage {
			allowed = slices.Concat(r.parse(cfg.Owners[s.pkg]), extra[s.pkg], maintainers)
		}
		ok, err := r.any(ctx, allowed, author)
		if err != nil {
			return Decision{}, err
		}
		if !ok && cfg.Approvals.OwnerReviewSatisfies {
			for _, a := range approvers {
				if strings.EqualFold(a, author) || !config.ValidLogin(a) {
					continue
				}
				if ok, err = r.any(ctx, allowed, a); err != nil {
					return Decision{}, err
				}
				if ok {
					break
				}
			}
		}
		if !ok {
			d := denial(s, author, allowed)
			dec.Denied = append(dec.Denied, d)
			dec.Diagnostics = append(dec.Diagnostics, denialDiagnostic(s, d, cfg.Approvals.OwnerReviewSatisfies))
		}
	}
	dec.Allowed = len(dec.Denied) == 0
	dec.Diagnostics = diag.Sort(dec.Diagnostics)
	return dec, nil
}

// subjects lists what the change touches, each once, in a stable order.
func subjects(cfg *config.Config, ch Change) []subject {
	var out []subject
	seen := map[string]bool{}
	addSubject := func(s subject) {
		if k := fmt.Sprint(s.kind, "\x00", s.name); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	if ch.ConfigChanged || slices.Contains(ch.Paths, config.ConfigFile) {
		addSubject(subject{name: config.ConfigFile, kind: kindConfig, file: config.ConfigFile})
	}
	isNew := map[string]bool{}
	for _, pkg := range ch.NewPackages {
		isNew[pkg] = true
		addSubject(subject{name: pkg, kind: kindNewPackage, pkg: pkg})
	}
	for _, pkg := range slices.Sorted(maps.Keys(ch.Packages)) {
		files := slices.Sorted(slices.Values(ch.Packages[pkg].Files))
		var content []string
		for _, f := range files {
			if _, ok := cfg.OwnersFilePackage(f); (ok || config.IsOwnersFileName(f)) && !ch.OwnersKept[f] {
				addSubject(subject{name: f, kind: kindOwnersFile, pkg: pkg, file: f})
			} else {
				content = append(content, f)
			}
		}
		if len(content) > 0 || len(files) == 0 {
			if isNew[pkg] {
				continue
			}
			s := subject{name: pkg, kind: kindPackage, pkg: pkg}
			if len(content) > 0 {
				s.file = content[0]
			}
			addSubject(s)
		}
	}
	for _, pkg := range slices.Sorted(slices.Values(ch.ReferenceEntries)) {
		if !isNew[pkg] {
			addSubject(subject{name: pkg, kind: kindPackage, pkg: pkg})
		}
	}
	for _, p := range slices.Sorted(slices.Values(ch.Paths)) {
		switch pkg, ok := cfg.OwnersFilePackage(p); {
		case p == config.ConfigFile:
		case ok:
			addSubject(subject{name: p, kind: kindOwnersFile, pkg: pkg, file: p})
		case config.IsOwnersFileName(p):
			addSubject(subject{name: p, kind: kindOwnersFile, file: p})
		default:
			addSubject(subject{name: p, kind: kindOutside, file: p})
		}
	}
	return out
}

func denial(s subject, author string, allowed []config.Principal) Denial {
	var reason string
	switch s.kind {
	case kindPackage:
		reason = fmt.Sprintf("%s is not an owner of package %s", author, s.pkg)
	case kindNewPackage:
		reason = fmt.Sprintf("package %s is new: adding a package needs a maintainer", s.pkg)
	case kindConfig:
		reason = fmt.Sprintf("%s is the repository configuration: changing it needs a maintainer", config.ConfigFile)
	case kindOwnersFile:
		if s.pkg != "" {
			reason = fmt.Sprintf("%s is the owners file of package %s: changing it needs a maintainer", s.name, s.pkg)
		} else {
			reason = fmt.Sprintf("%s is an owners file: changing it needs a maintainer", s.name)
		}
	default:
		reason = fmt.Sprintf("%s is outside any package: changing it needs a maintainer", s.name)
	}
	var could []string
	seen := map[string]bool{}
	for _, p := range allowed {
		if k := strings.ToLower(p.Raw); !seen[k] {
			seen[k] = true
			could = append(could, p.Raw)
		}
	}
	return Denial{Subject: s.name, Reason: reason, CouldApprove: could}
}

func denialDiagnostic(s subject, d Denial, reviewsCount bool) diag.Diagnostic {
	rule := map[subjectKind]string{kindPackage: "owners-not-owner", kindNewPackage: "owners-new-package", kindConfig: "owners-config-change",
		kindOwnersFile: "owners-owners-file", kindOutside: "owners-outside-package"}[s.kind]
	var hint string
	switch {
	case len(d.CouldApprove) == 0:
		hint = fmt.Sprintf("nobody may change %s: add maintainers to %s", d.Subject, config.ConfigFile)
	case reviewsCount:
		hint = "an approving review by one of these permits it: " + strings.Join(d.CouldApprove, ", ")
	default:
		hint = "reviews do not count here (approvals.ownerReviewSatisfies is false): one of these must make the change: " + strings.Join(d.CouldApprove, ", ")
	}
	return diag.Diagnostic{Severity: diag.Error, Check: "owners", Rule: rule, File: s.file, Package: s.pkg, Message: d.Reason, Hint: hint}
}

// resolver matches logins against principals, asking Membership about teams once per (team, login).
type resolver struct {
	members Membership
	cache   map[string]bool
}

// parse keeps the valid principals of a configured list (ParseConfig already rejected invalid ones).
func (r *resolver) parse(list []string) []config.Principal {
	var out []config.Principal
	for _, s := range list {
		if p, _, ok := config.ParsePrincipal(s); ok {
			out = append(out, p)
		}
	}
	return out
}

// any reports whether login is one of ps, directly (checked first) or through a team.
func (r *resolver) any(ctx context.Context, ps []config.Principal, login string) (bool, error) {
	login = strings.ToLower(login)
	for _, p := range ps {
		if !p.IsTeam() && p.Login == login {
			return true, nil
		}
	}
	if r.members == nil {
		return false, nil
	}
	for _, p := range ps {
		if !p.IsTeam() {
			continue
		}
		key := p.Org + "/" + p.Team + "\x00" + login
		member, cached := r.cache[key]
		if !cached {
			var err error
			if member, err = r.members.IsMember(ctx, p.Org, p.Team, login); err != nil {
				err = fmt.Errorf("owners: is %s a member of team %s/%s: %w", login, p.Org, p.Team, err)
				if diag.CategoryOf(err) == diag.Internal {
					err = diag.InfraError(err)
				}
				return false, err
			}
			r.cache[key] = member
		}
		if member {
			return true, nil
		}
	}
	return false, nil
}
