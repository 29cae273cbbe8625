package interpreter

// RunListItem is one list_runs item (tools.md): a run as the read model
// lists it. The gateway writes it, and the inbox and `baton runs` read it.
type RunListItem struct {
	ID        string  `json:"id"`
	Process   string  `json:"process"`
	Version   int     `json:"version"`
	State     string  `json:"state"`
	Outcome   *string `json:"outcome"`
	StartedAt string  `json:"startedAt"`
	UpdatedAt string  `json:"updatedAt"`
	Inputs    Values  `json:"inputs"`
}
