package notify

// Helpers shared with the external tests.
var (
	SampleNotice = sampleNotice
	Link         = link
)
