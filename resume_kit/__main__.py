from resume_kit.cli.app import entry

if __name__ == "__main__":
    entry()
