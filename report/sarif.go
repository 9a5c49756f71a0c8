package report

import (
	"encoding/json"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// SARIF 2.1.0, the subset code-scanning tools read. Written by hand: the format is small and stable, and a
// library would add a dependency for a dozen structs.

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
	// Properties carry "truncated": the results beyond the per-rule limit, counted by rule id.
	Properties *sarifRunProperties `json:"properties,omitempty"`
}

type sarifRunProperties struct {
	Truncated map[string]int `json:"truncated"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri,omitempty"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// WriteSARIF renders the report's diagnostics as a SARIF 2.1.0 log. File paths are made relative to
// root ("" keeps them as they are) so code scanning can place them in the repository.
func WriteSARIF(w io.Writer, r *Report, version, root string) error {
	ds := r.Diagnostics()
	ruleIdx := map[string]int{}
	var ids []string
	for _, d := range ds {
		id := RuleID(d)
		if _, ok := ruleIdx[id]; !ok {
			ruleIdx[id] = 0
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	rules := make([]sarifRule, len(ids))
	for i, id := range ids {
		ruleIdx[id] = i
		rules[i] = sarifRule{ID: id, ShortDescription: sarifMessage{Text: id}}
	}
	results := make([]sarifResult, 0, len(ds))
	for _, d := range ds {
		res := sarifResult{RuleID: RuleID(d), RuleIndex: ruleIdx[RuleID(d)], Level: sarifLevel(d.Severity), Message: sarifMessage{Text: messageWithHint(d)}}
		if d.File != "" {
			loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: sarifURI(joinRoot(root, d.File))}}}
			if d.Line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: d.Line, StartColumn: d.Column}
			}
			res.Locations = []sarifLocation{loc}
		}
		results = append(results, res)
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []sarifRun{{
			Tool:    sarifTool{Driver: sarifDriver{Name: "catalogbot", InformationURI: "https://github.com/catalogbot/catalogbot", Version: version, Rules: rules}},
			Results: results,
		}},
	}
	for _, st := range r.Stages {
		for _, t := range st.Truncated {
			p := log.Runs[0].Properties
			if p == nil {
				p = &sarifRunProperties{Truncated: map[string]int{}}
				log.Runs[0].Properties = p
			}
			p.Truncated[RuleID(diag.Diagnostic{Check: t.Check, Rule: t.Rule})] += t.Count
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

func sarifLevel(s diag.Severity) string {
	switch s {
	case diag.Error:
		return "error"
	case diag.Warning:
		return "warning"
	default:
		return "note"
	}
}

func messageWithHint(d diag.Diagnostic) string {
	if d.Hint == "" {
		return d.Message
	}
	return d.Message + " (" + d.Hint + ")"
}

// sarifURI makes a slash-separated relative path a relative URI reference: each segment percent-encoded,
// ':' included, so "a:b/c" cannot read as a scheme and "%", " ", "#" and "?" keep their literal meaning.
func sarifURI(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	return strings.Join(segs, "/")
}

func joinRoot(root, file string) string {
	if root == "" || root == "." {
		return file
	}
	return root + "/" + file
}
