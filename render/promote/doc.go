// Package promote adds a new cluster version's catalog to the packages of a template-driven repository
// (community-operators-prod's FBC promotion, operator-pipelines' scripts/promote-catalog.py): for each
// package whose ci.yaml maps the catalog before the new one and whose fbc.version_promotion_strategy
// allows it, the new catalog goes into the catalog_names of the template that renders the previous one,
// with the smallest ci.yaml diff (the list gains the name; every other byte stays), and the template is
// rendered into <new catalog>/<package>/catalog.yaml with the new catalog's migration level and opm.
// Plan computes everything and writes nothing; the front-end writes the files.
package promote
