package workflows

// StartWindow is startWindow, for the tests of package workflows_test.
const StartWindow = startWindow

// SignalEnds has the runs that start children from now on start children
// that signal their end, as runs from before changeChildEndsByResult did.
func SignalEnds(on bool) { signalEnds.Store(on) }
