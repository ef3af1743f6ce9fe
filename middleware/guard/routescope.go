package guard

// RouteScope says whether lock keys include the route, for adapters
// configured by a struct (echolock's Config.RouteScope).
type RouteScope int

// The route scopes.
const (
	// RouteScopeDefault includes the route except for limits.
	RouteScopeDefault RouteScope = iota
	// RouteScopeOn includes it.
	RouteScopeOn
	// RouteScopeOff leaves it out.
	RouteScopeOff
)
