// App code imports only Vane: the engine's value, context and defaults types come with it.
@_exported import VaneCore
