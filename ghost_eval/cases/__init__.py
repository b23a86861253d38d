"""Case files: a use case's scenario, ground truth, scoring facts and key facts (`case`), and the phrase language its
key facts and wrong claims are written in (`phrases`)."""
