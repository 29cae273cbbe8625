package workflows

// Processes that the tests of package workflows and of package
// workflows_test both run.

// EndsAtOnceSrc is a process whose run ends in its first workflow task,
// as examples/bench-fanout's child does; tests start it alone and as a
// child.
const EndsAtOnceSrc = `---
name: ends-at-once
description: Ends where it starts.
inputs:
  item: string
steps:
  - id: done
    finish: done
---
Body.
`

// FanSrc runs ends-at-once once per item of its list, all at once.
const FanSrc = `---
name: fan
description: Runs ends-at-once once per item.
inputs:
  items: { type: list, items: string }
steps:
  - id: each
    process: ends-at-once
    for_each: inputs.items
    inputs: { item: item }
  - id: done
    finish: done
---
Body.
`
