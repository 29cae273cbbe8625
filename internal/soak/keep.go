package soak

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// keep writes what a failed soak leaves to look into: every process's
// output (logs/NAME.log) and every write the clients had answered
// (journal.jsonl, one JSON object a line, in the order answered).
func keep(dir string, d *Deployment, j *Journal) error {
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	for _, p := range d.Processes() {
		if err := os.WriteFile(filepath.Join(logs, p.Name+".log"), []byte(p.Output()), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "journal.jsonl"))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, w := range j.Writes() {
		if err := enc.Encode(w); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
