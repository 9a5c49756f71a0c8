// Package workflowlint holds the test that checks catalogbot's example workflows (examples/workflows)
// and its action.yml with actionlint. It is a module of its own so that actionlint, a tool, does not
// enter the product's go.mod: run it with `cd hack/workflowlint && go test ./...`.
package workflowlint
