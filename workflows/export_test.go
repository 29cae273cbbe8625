package workflows

// StartWindow is startWindow, for the tests of package workflows_test.
const StartWindow = startWindow
