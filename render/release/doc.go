// Package release applies a bundle's release-config.yaml (operators/<package>/<version>/release-config.yaml,
// the FBC auto-release of community-operators-prod) to its package's catalog templates: for each
// catalog_templates entry, the channel entries and the olm.bundle image go into a basic template, or the
// image into a semver template's channel lists. Edits are insertions only: every line of the template
// stays as written, and the inserted lines are written as upstream's release pipeline (ruamel.yaml's
// round trip) writes them, so a release reproduces upstream's commit wherever upstream did not rewrite
// lines it did not mean to change. Validate refuses, with file and line, what the release could not apply.
package release
