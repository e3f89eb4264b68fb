"""One module per trace file format; each ends in :func:`gpuviz.trace.model.assemble`."""
