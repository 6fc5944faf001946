package scenario

// viewSides are the projected-view sides of the memory scenarios; none
// until kube has projected views.
var viewSides []Side

// viewReports are the lines of the projected view: none without one.
func viewReports(memoryRuns) []Report { return nil }
