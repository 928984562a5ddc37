// Package install holds the test that leakbench installs as a user's
// machine would: `go install github.com/leakbench/leakbench/cmd/leakbench@latest`
// from an empty module cache, with CGO_ENABLED=0. It has no code. The test
// builds a copy of the tree (without .git) with a fresh GOMODCACHE and
// GOPATH through the module proxy, so every module is downloaded: it is
// slow and runs only with the install tag (make test-install).
package install
