// Package faults proves that Baton loses nothing under faults. Its tests
// run Baton as a deployment of several processes on this machine — Temporal
// on PostgreSQL (`baton temporal`), two `baton worker` and two
// `baton gateway` processes, built from this repository — drive hundreds of
// runs to their end through both gateways with clients that retry with the
// same requestId, and meanwhile kill processes, restart PostgreSQL and
// restart Temporal, or kill both workers while a for_each of 200 child runs
// starts and joins. Afterwards every run has ended, no step was done twice,
// every answer equals its replay, and no process panicked. A second
// deployment with another organization on the same PostgreSQL and Temporal
// namespace sees nothing of the first.
//
// The package has only tests; this file holds its documentation.
package faults
