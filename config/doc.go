// Package config reads a catalog repository's configuration: .catalogbot.yaml (maintainers, owners,
// catalogs, images, smoke, merge, publish and limits settings) and the per-package owners files (ci.yaml
// reviewers, OWNERS approvers), with file:line diagnostics and bounded YAML (no bombs, no anchors that
// expand past a limit). It decides nothing: checks/owners decides who may change what.
package config
