from resume_kit.cli.app import main

if __name__ == "__main__":
    main()
