"""Table state: the layer every engine package above the file-system view builds on.

``state`` holds :class:`TableState` (a table's config, timeline and schema as loaded at one
moment, and the write defaults it overlays on options), ``properties_file`` the one owner of
``.hoodie/hoodie.properties`` (create, load, recover, rewrite) and ``create`` a new table's
config and layout. It imports only the layers below it (config, schema, keygen, merge,
storage, timeline, filegroup) and never pyspark; the Spark facade
:class:`hudilite.table.Table` sits far above.
"""
