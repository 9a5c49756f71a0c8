// Package owners decides whether a pull request's author may make the change: maintainers may change
// anything, package owners (listed in the configuration or in a per-package ci.yaml / OWNERS file) may
// change their packages, and everything else (new packages, configuration, owners files, paths outside any
// package) needs a maintainer. An approving review by someone who would be allowed can stand in for the
// author.
//
// It is domain code: it imports nothing from GitHub. Team membership comes in through Membership, which
// the bot implements; the configuration comes from package config, read at the base revision.
package owners
