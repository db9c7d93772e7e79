// Package e2e holds anthill's end-to-end tests: the operator binary against a
// real control plane (see e2e/framework) and the GD2 simulator. The tests that
// run the operator binary carry the build tag e2e.
package e2e
