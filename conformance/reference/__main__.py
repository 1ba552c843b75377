from conformance.reference import candidate

candidate.serve()
