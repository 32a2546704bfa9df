print("hammock")
