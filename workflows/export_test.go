package workflows

// StartWindow is startWindow, for the tests of package workflows_test.
const StartWindow = startWindow

// ChangeChildEndsByResult is changeChildEndsByResult, for the tests of
// package workflows_test that run a worker from before it.
const ChangeChildEndsByResult = changeChildEndsByResult
