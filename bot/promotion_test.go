package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// The promotion world: three packages of the shared template repository mapped to v4.20 and v4.21, one
// per strategy: kepler-operator (always), dotvirt-operator (review-needed) and kube-green (never).
// Their ci.yaml files are the shared data's with the mapping cut to the configured catalogs and the
// strategy set (kepler's says none upstream: ecr-secret-operator, the shared data's one always package,
// has a template ahead of its committed catalogs, which the check's drift stage rightly refuses); the
// shared data's v4.22 catalogs are what upstream rendered for them.
const (
	promoteAlways   = "kepler-operator"
	promoteReview   = "dotvirt-operator"
	promoteReviewer = "epheo" // dotvirt-operator's ci.yaml reviewer
	promoteNever    = "kube-green"
	promoteTo       = "v4.22"
)

var promoteCI = map[string]string{
	promoteAlways: "---\naddReviewers: true\nfbc:\n  version_promotion_strategy: always\n  catalog_mapping:\n" +
		"    # list of catalogs for which release is to be done\n    - catalog_names:\n        - v4.20\n        - v4.21\n" +
		"      # The name of the template to be used for the release\n      template_name: basic-template.yaml\n" +
		"      type: olm.template.basic\n  enabled: true\nreviewers:\n  - KaiyiLiu1234\n  - sthaha\n",
	promoteReview: "---\nreviewers:\n  - epheo\nfbc:\n  enabled: true\n  version_promotion_strategy: review-needed\n  catalog_mapping:\n" +
		"    - template_name: semver.yaml\n      type: olm.semver\n      catalog_names:\n        - v4.20\n        - v4.21\n",
	promoteNever: "---\nfbc:\n  version_promotion_strategy: never\n  catalog_mapping:\n  - catalog_names: [\"v4.20\", \"v4.21\"]\n" +
		"    template_name: basic-template.yaml\n    type: olm.template.basic\n  enabled: true\nreviewers:\n- davidebianchi\n",
}

// promoteConfig is the world's configuration listing catalogs versions; rules are lines added to its
// merge section, then its promotion section.
func promoteConfig(versions string, rules ...string) string {
	rules = append(rules, "", "")
	return strings.Replace(repoConfig, "merge:\n  method: squash\n", "merge:\n  method: squash\n"+rules[0], 1) +
		"catalogs:\n  pattern: catalogs/{version}\n  versions: [" + versions + "]\n" +
		"  migrateLevel: bundle-object-to-csv-metadata\n  migrateFrom: v4.17\npromotion:\n" + rules[1]
}

// promoteMain seeds main with the promotion world (catalogs v4.20 and v4.21) and returns main.
func promoteMain(t *testing.T, h *harness, rules ...string) string {
	t.Helper()
	seeded := h.seedMain(promoteConfig("v4.20, v4.21", rules...))
	root := shareddata.Dir(t, "fbc-templates")
	files := map[string]string{}
	for pkg, ci := range promoteCI {
		files["operators/"+pkg+"/ci.yaml"] = ci
		for _, sub := range []string{"operators/" + pkg + "/catalog-templates", "catalogs/v4.20/" + pkg, "catalogs/v4.21/" + pkg} {
			entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(sub)))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(sub), e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				files[sub+"/"+e.Name()] = string(data)
			}
		}
	}
	main := h.label(h.git.Commit("main", seeded, "catalog-admin", "three packages", files), "MAIN2")
	h.gh.SetRef(repoFull, "heads/main", main)
	return main
}

// addCatalog commits, as a maintainer, main's configuration listing v4.22 too (and files, when given) and
// returns the commit: the push the App promotes on.
func addCatalog(t *testing.T, h *harness, main string, files map[string]string) string {
	t.Helper()
	cfg := h.git.Git("show", main+":.catalogbot.yaml") + "\n"
	added := strings.Replace(cfg, "versions: [v4.20, v4.21]", "versions: [v4.20, v4.21, v4.22]", 1)
	if added == cfg {
		t.Fatalf("the configuration lists no versions:\n%s", cfg)
	}
	if files == nil {
		files = map[string]string{}
	}
	files[".catalogbot.yaml"] = added
	after := h.label(h.git.Commit("main", main, "catalog-admin", "catalogs: add v4.22", files), "ADDED")
	h.gh.SetRef(repoFull, "heads/main", after)
	return after
}

// promotionPRs are the pull requests of promotion branches, by package directory.
func promotionPRs(h *harness) map[string][]githubtest.PullRequest {
	out := map[string][]githubtest.PullRequest{}
	for _, pr := range h.gh.PullRequests(repoFull) {
		if dir, ok := strings.CutPrefix(pr.HeadRef, "catalogbot/promote/"); ok {
			dir = strings.TrimSuffix(dir, "-"+promoteTo)
			out[dir] = append(out[dir], pr)
		}
	}
	return out
}

// promotedOnce requires one promotion pull request per package in pkgs and none else, each titled as
// upstream's commits, authored by the App from its branch, recorded as opened with no error, and returns
// them by package.
func promotedOnce(t *testing.T, h *harness, pkgs ...string) map[string]githubtest.PullRequest {
	t.Helper()
	all := promotionPRs(h)
	if len(all) != len(pkgs) {
		t.Fatalf("promotion pull requests of %d packages, want %v: %+v\n%s", len(all), pkgs, all, h.logs.String())
	}
	out := map[string]githubtest.PullRequest{}
	for _, pkg := range pkgs {
		prs := all[pkg]
		if len(prs) != 1 {
			t.Fatalf("%d promotion pull requests of %s, want 1: %+v", len(prs), pkg, prs)
		}
		pr := prs[0]
		if want := "Promote operator " + pkg + " to catalog version 4.22."; pr.Title != want || pr.User != "catalogbot[bot]" || pr.BaseRef != "main" {
			t.Errorf("promotion pull request: title %q (want %q) by %s into %s", pr.Title, want, pr.User, pr.BaseRef)
		}
		if head := h.git.Git("rev-parse", "refs/heads/catalogbot/promote/"+pkg+"-"+promoteTo); pr.HeadSHA != head {
			t.Errorf("pull request head %s, branch at %s", pr.HeadSHA, head)
		}
		r, err := h.bot.store.Promotion(context.Background(), repoFull, promoteTo, pkg)
		if err != nil || r.State != store.AppPROpened || r.PR != pr.Number || r.Commit != pr.HeadSHA || r.Error != "" {
			t.Errorf("promotion record of %s: %+v %v", pkg, r, err)
		}
		out[pkg] = pr
	}
	return out
}

// The App's promotion, end to end: a push adding v4.22 to catalogs.versions opens one pull request per
// package promote would change, titled as upstream's commits and labelled as upstream's script labels
// them, each holding the package's one-line ci.yaml edit and its catalog as upstream rendered it; none for
// the package whose strategy is never. Checked like any other: the always one passes the owners stage
// under promotion.autoMerge and merges with nobody's approval; the review-needed one waits for a
// maintainer, which its package owner's approval (enough for the owners stage) is not.
func TestPromotionOpensPRsPerPackageAndMergesAsStrategiesSay(t *testing.T) {
	h, _ := releaseHarness(t)
	main := promoteMain(t, h, "", "  autoMerge: true\n")
	after := addCatalog(t, h, main, nil)
	h.deliver("push", "push/payload.json", pushEdits(main, after))
	h.waitIdleFor(releaseWait)

	prs := promotedOnce(t, h, promoteAlways, promoteReview)
	root := shareddata.Dir(t, "fbc-templates")
	for pkg, pr := range prs {
		if parent := h.git.Git("rev-parse", pr.HeadSHA+"^"); parent != after {
			t.Errorf("%s: the promotion commit's parent is %s, not the push's commit %s", pkg, parent, after)
		}
		ci, cat := "operators/"+pkg+"/ci.yaml", "catalogs/v4.22/"+pkg+"/catalog.yaml"
		if changed := h.git.Git("diff", "--name-only", after, pr.HeadSHA); changed != cat+"\n"+ci {
			t.Errorf("%s: the promotion commit changes:\n%s", pkg, changed)
		}
		if diff := h.git.Git("diff", "-U0", after, pr.HeadSHA, "--", ci); !slices.Equal(changedLines(diff), []string{"+        - v4.22"}) {
			t.Errorf("%s: the ci.yaml diff is not the one inserted line:\n%s", pkg, diff)
		}
		want, err := os.ReadFile(filepath.Join(root, "catalogs", "v4.22", pkg, "catalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if got := h.git.Git("show", pr.HeadSHA+":"+cat); got != strings.TrimRight(string(want), "\n") {
			t.Errorf("%s: the rendered catalog is not upstream's v4.22 one:\n%s", pkg, firstDifference(got, string(want)))
		}
		strategy := map[string]string{promoteAlways: "always", promoteReview: "review-needed"}[pkg]
		if labels := h.gh.PullRequest(repoFull, pr.Number).Labels; len(labels) != 1 || labels[0] != "catalog-promotion/"+strategy {
			t.Errorf("%s: labels %v", pkg, labels)
		}
	}
	always, review := prs[promoteAlways], prs[promoteReview]
	if merged, at := h.gh.Merged(repoFull, always.Number); !merged || at != always.HeadSHA {
		t.Fatalf("the always promotion was not merged (%v at %s); readiness:\n%s\ncheck runs: %+v", merged, at, h.readiness(always.Number), checkRunsOf(h, always.HeadSHA))
	}
	if runs := checkRunsOf(h, always.HeadSHA); !strings.Contains(runs, "the App's promotion of kepler-operator into v4.22 changes only its ci.yaml and its directory there") {
		t.Errorf("the always promotion's check:\n%s", runs)
	}
	// GitHub lands the merge on main: the review-needed promotion is checked again on the merge into it.
	h.git.SetBranch("main", always.HeadSHA)
	h.gh.SetRef(repoFull, "heads/main", always.HeadSHA)
	h.requireNotMerged(review.Number, "a review-needed promotion merged before anyone approved")
	if c := h.readiness(review.Number); !strings.Contains(c, "- [ ] a maintainer must approve the promotion of `dotvirt-operator`") {
		t.Errorf("the review-needed promotion's readiness comment:\n%s", c)
	}
	// The package's owner approves: the owners stage passes (no merge.requiredApprovals here), which
	// would merge any other pull request, but no maintainer approved.
	h.review(review.Number, review.User, review.HeadSHA, after, promoteReviewer, "APPROVED", review.HeadSHA)
	h.waitIdleFor(releaseWait)
	h.requireNotMerged(review.Number, "the package owner's approval merged a review-needed promotion")
	if c := h.readiness(review.Number); !strings.Contains(c, "- [ ] a maintainer must approve") || !strings.Contains(c, "- [x] catalogbot checks passed") {
		t.Errorf("after the owner's approval the readiness comment says:\n%s", c)
	}
	h.review(review.Number, review.User, review.HeadSHA, after, "catalog-admin", "APPROVED", review.HeadSHA)
	h.waitIdleFor(releaseWait)
	if merged, at := h.gh.Merged(repoFull, review.Number); !merged || at != review.HeadSHA {
		t.Fatalf("the review-needed promotion was not merged after a maintainer's approval; readiness:\n%s", h.readiness(review.Number))
	}
	if page := h.get("/"); !strings.Contains(page, "<code>dotvirt-operator</code>") || !strings.Contains(page, `class="promotion-opened"`) {
		t.Errorf("the status page does not show the promotions:\n%s", page)
	}
}

// changedLines are the added and removed lines of a unified diff.
func changedLines(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
			out = append(out, l)
		}
	}
	return out
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: %.200q, want %.200q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// checkRunsOf are the summaries and texts of the check runs of head, for a failure message.
func checkRunsOf(h *harness, head string) string {
	var b strings.Builder
	for _, r := range h.gh.CheckRuns(repoFull) {
		if r.HeadSHA == head {
			fmt.Fprintf(&b, "%s\n%s\n%s\n", r.Conclusion, r.Output.Summary, r.Output.Text)
		}
	}
	return b.String()
}
