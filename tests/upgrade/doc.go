// Package upgrade tests that today's Baton opens data written by earlier
// builds: each fixture under tests/testdata/upgrade holds the dumps of an
// earlier `baton dev`'s databases, its keys, and what it was asked and
// answered (tests/upgrade/fixture). The generator that writes a fixture is
// tests/upgrade/generate.
//
// The package has only tests; this file holds its documentation.
package upgrade
