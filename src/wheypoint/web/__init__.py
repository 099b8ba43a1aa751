"""The person's front door: `wheypoint serve`, a local web view of the store where gates get answered."""
